// Turns the measured vLLM kernel tables of ../shared/silicon (parquet, one
// kernel call a row, milliseconds) into this folder's compact tables: a CSV
// a kernel and GPU, a row a shape with the swept size across, microseconds
// to 4 significant digits, an empty cell where nothing was measured.
//
//   cd settings/kernels && npm install && node derive.mjs [SILICON_FOLDER]
//
// SILICON_FOLDER defaults to ../../../shared/silicon/aiconfigurator. Run it
// again only when the source tables change: it rewrites every table and
// SOURCES (the digests of the files read).
import { createHash } from 'node:crypto'
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { asyncBufferFromFile, parquetReadObjects } from 'hyparquet'
import { compressors } from 'hyparquet-compressors'

const source = process.argv[2] ?? '../../../shared/silicon/aiconfigurator'
// The source's GPU folders, by the names settings/hardware/gpus.json gives.
const gpus = {
  h100_sxm: 'h100',
  h200_sxm: 'h200',
  b200_sxm: 'b200',
  a100_sxm: 'a100-80gb',
  l40s: 'l40s',
  rtx_pro_6000_server: 'rtx-pro-6000',
}

const number = (v) => (typeof v === 'bigint' ? Number(v) : v)
const micro = (ms) => Number((ms * 1000).toPrecision(4)).toString()
const digests = []

// The one parquet file of `op` (gemm, attention, ...) named `name`.
async function read(gpu, op, framework, name) {
  const base = join(source, 'data', gpu, op, framework)
  const version = readdirSync(base).sort()[0]
  const path = join(base, version, name + '.parquet')
  const bytes = readFileSync(path)
  digests.push(`${createHash('sha256').update(bytes).digest('hex')}  ${path.slice(source.length + 1)}`)
  const rows = await parquetReadObjects({ file: await asyncBufferFromFile(path), compressors })
  return { rows: rows.map((r) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, number(v)]))), version }
}

// A table: a row a key (the `keys` columns), the `across` column's values
// as columns, each cell the latency there.
function pivot(rows, keys, across, value = (r) => r[across]) {
  const columns = [...new Set(rows.map(value))].sort((a, b) => a - b)
  const at = new Map(columns.map((c, i) => [c, i]))
  const table = new Map()
  for (const r of rows) {
    const key = keys.map((k) => r[k]).join(',')
    if (!table.has(key)) table.set(key, { key: keys.map((k) => r[k]), cells: new Array(columns.length).fill('') })
    table.get(key).cells[at.get(value(r))] = micro(r.latency)
  }
  const sorted = [...table.values()].sort((a, b) => {
    for (let i = 0; i < a.key.length; ++i) {
      if (a.key[i] === b.key[i]) continue
      return typeof a.key[i] === 'number' ? a.key[i] - b.key[i] : String(a.key[i]).localeCompare(String(b.key[i]))
    }
    return 0
  })
  return [keys.join(',') + ',' + columns.join(','), ...sorted.map((r) => r.key.join(',') + ',' + r.cells.join(','))].join('\n') + '\n'
}

for (const [folder, name] of Object.entries(gpus)) {
  const out = join('.', name)
  mkdirSync(out, { recursive: true })
  const gemm = await read(folder, 'gemm', 'vllm', 'gemm_perf')
  writeFileSync(join(out, 'gemm.csv'), pivot(gemm.rows, ['gemm_dtype', 'n', 'k'], 'm'))
  const context = await read(folder, 'attention', 'vllm', 'context_attention_perf')
  const attention = ['kv_cache_dtype', 'head_dim', 'window_size', 'num_heads', 'num_key_value_heads', 'batch_size']
  writeFileSync(join(out, 'context_attention.csv'), pivot(context.rows, attention, 'isl'))
  const generation = await read(folder, 'attention', 'vllm', 'generation_attention_perf')
  // A decode step's sequences hold isl + step tokens of KV.
  writeFileSync(join(out, 'generation_attention.csv'),
    pivot(generation.rows.map((r) => ({ ...r, kv_len: r.isl + r.step })), attention, 'kv_len'))
  // The fused MoE layer, its experts loaded evenly (int4 weights left out);
  // where no even load was measured (A100, L40S), the flattest power law.
  const moe = await read(folder, 'moe', 'vllm', 'moe_perf')
  const load = moe.rows.some((r) => r.distribution === 'balanced') ? 'balanced' : 'power_law_1.01'
  const even = moe.rows.filter((r) => r.distribution === load && r.moe_dtype !== 'int4_wo')
  writeFileSync(join(out, 'moe.csv'), pivot(even,
    ['moe_dtype', 'distribution', 'hidden_size', 'inter_size', 'topk', 'num_experts', 'moe_tp_size', 'moe_ep_size'], 'num_tokens'))
  const allreduce = await read(folder, 'comm', 'vllm', 'custom_allreduce_perf')
  writeFileSync(join(out, 'allreduce.csv'), pivot(allreduce.rows, ['backend', 'allreduce_dtype', 'num_gpus'], 'message_size'))
  writeFileSync(join(out, 'VERSION'), `vllm ${gemm.version}\n`)
  console.log(`${name}: vLLM ${gemm.version}; gemm ${gemm.rows.length}, context ${context.rows.length}, generation ${generation.rows.length}, moe ${moe.rows.length}, allreduce ${allreduce.rows.length} rows`)
}
writeFileSync('SOURCES', digests.join('\n') + '\n')
