// One knob a row, declared beside the struct that holds it, in the manner of
// ns-3's attributes: its key, the member it sets with the check of its bounds,
// its default (the struct's own), its flag and help, its label and unit on the
// report page, and whether a fleet's class may set it. The settings reader and
// writer, the flags and their help, the page's rows and a fleet class's keys
// are all made from the rows; checks that involve several knobs stay code,
// next to the rows.
#pragma once

#include <algorithm>
#include <any>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/json_checks.hpp"

namespace infersim {

// How a flag's text becomes the knob's JSON value (cli/run_options.cpp):
// kDuration seconds or a number with a unit (600s, 600000ms); kPercentiles
// "50,90,99" as a list; kGoodput vLLM's "ttft:500 e2el:2000" as an object of
// bounds in ms ("none": null); kSwitch on or off (true or false) as a boolean;
// kWeights "queue:2,prefix:3" as an object of numbers by name (the knob checks
// the names).
enum class KnobText : std::uint8_t {
  kReal,
  kWhole,
  kText,
  kResolution,
  kDuration,
  kPercentiles,
  kGoodput,
  kSwitch,
  kWeights
};

// What a row says of its knob beyond its key and how it is set: how its
// value reads as text, its flag and help, its page row and its fleet marks.
// A row carried to another struct (knob_like) keeps them all.
struct KnobMarks {
  KnobText text = KnobText::kReal;
  std::string flag_name;      // without the dashes; empty: the key's last part, '_' as '-'
  std::string help_text;      // the flag's help, its default added after it
  std::string default_words;  // the default when the value does not say it well
  bool no_flag = false;       // set by settings files only
  std::string label_text;     // the report page's row; empty: none of its own
  std::string unit_text;      // after the value on the page: " s", " W"
  std::string pair_key;       // a knob shown in the same row, after " / "
  bool class_knob = false;    // a fleet's class may set it (BATCHING.md section 11)
  // A fleet takes it from its classes' presets when they agree (section 13.1).
  bool preset_wide = false;
  // Of a fleet split into prefill and decode alone (section 12): shown only
  // for one, and refused elsewhere unless a preset carries it.
  bool split_only = false;
  int page_order = 0;  // its place among the page's rows; 0: after those placed
  // A router's own knob: the page shows it only when the run's router (or
  // decode router) is one of these names; empty: always.
  std::vector<std::string> router_names;
};

template <class Owner>
struct Knob : KnobMarks {
  // Checks a value and stores it, or throws InputError naming source and label.
  using Set = std::function<void(Owner&, const nlohmann::json&, const std::string& source,
                                 const std::string& label)>;
  // The value as a settings file holds it.
  using Get = std::function<nlohmann::ordered_json(const Owner&)>;

  std::string key;  // within its owner: "max_num_seqs", or "run.devices" in Settings
  Set set;
  Get get;

  Knob& flag(std::string name) {
    flag_name = std::move(name);
    return *this;
  }
  Knob& as(KnobText how) {
    text = how;
    return *this;
  }
  Knob& help(std::string words) {
    help_text = std::move(words);
    return *this;
  }
  Knob& by_default(std::string words) {
    default_words = std::move(words);
    return *this;
  }
  Knob& file_only() {
    no_flag = true;
    return *this;
  }
  Knob& label(std::string words, std::string unit = "") {
    label_text = std::move(words);
    unit_text = std::move(unit);
    return *this;
  }
  Knob& shown_with(std::string key_beside) {
    pair_key = std::move(key_beside);
    return *this;
  }
  Knob& per_class() {
    class_knob = true;
    return *this;
  }
  Knob& from_presets() {
    preset_wide = true;
    return *this;
  }
  Knob& of_a_split() {
    split_only = true;
    return *this;
  }
  Knob& for_routers(std::vector<std::string> names) {
    router_names = std::move(names);
    return *this;
  }
  Knob& on_page(int place) {
    page_order = place;
    return *this;
  }
  // The flag without its dashes.
  std::string flag_or_key() const {
    if (!flag_name.empty()) return flag_name;
    std::string name = key.substr(key.rfind('.') + 1);
    std::replace(name.begin(), name.end(), '_', '-');
    return name;
  }
};

// A real number, checked by `check` (at least 0 unless said).
template <class Owner>
Knob<Owner> real_knob(std::string key, double Owner::*member,
                      json_check::RealCheck check = json_check::non_negative) {
  Knob<Owner> row;
  row.key = std::move(key);
  row.set = [=](Owner& o, const nlohmann::json& v, const std::string& src, const std::string& l) {
    o.*member = check(v, src, l);
  };
  row.get = [=](const Owner& o) { return nlohmann::ordered_json(o.*member); };
  return row;
}

// A whole number in [min, max], whatever integer type holds it.
template <class Owner, class Int>
Knob<Owner> count_knob(std::string key, Int Owner::*member, std::uint64_t min, std::uint64_t max) {
  Knob<Owner> row;
  row.key = std::move(key);
  row.text = KnobText::kWhole;
  row.set = [=](Owner& o, const nlohmann::json& v, const std::string& src, const std::string& l) {
    o.*member = static_cast<Int>(json_check::whole(v, min, max, src, l));
  };
  row.get = [=](const Owner& o) { return nlohmann::ordered_json(o.*member); };
  return row;
}

// On or off: true or false.
template <class Owner>
Knob<Owner> switch_knob(std::string key, bool Owner::*member) {
  Knob<Owner> row;
  row.key = std::move(key);
  row.text = KnobText::kSwitch;
  row.set = [=](Owner& o, const nlohmann::json& v, const std::string& src, const std::string& l) {
    if (!v.is_boolean())
      json_check::bad(src, l, "expected true or false, got " + json_check::shown(v));
    o.*member = v.get<bool>();
  };
  row.get = [=](const Owner& o) { return nlohmann::ordered_json(o.*member); };
  return row;
}

// A row of `To` saying what `row` says (its text, flag, help, page, fleet
// marks), keyed `key`, set and read by `set` and `get`.
template <class To, class From>
Knob<To> knob_like(const Knob<From>& row, std::string key, typename Knob<To>::Set set,
                   typename Knob<To>::Get get) {
  Knob<To> out;
  static_cast<KnobMarks&>(out) = row;
  out.flag_name = row.flag_or_key();
  out.key = std::move(key);
  out.set = std::move(set);
  out.get = std::move(get);
  return out;
}

// The rows of a struct held by another (the batching knobs in the settings),
// as rows of the holder under `section`: "max_num_seqs" -> "batching.max_num_seqs".
template <class Outer, class Inner>
std::vector<Knob<Outer>> knobs_within(const std::vector<Knob<Inner>>& rows,
                                      const std::string& section, Inner Outer::*member) {
  std::vector<Knob<Outer>> out;
  for (const Knob<Inner>& row : rows) {
    const auto set = row.set;
    const auto get = row.get;
    out.push_back(knob_like<Outer>(
        row, section + "." + row.key,
        [=](Outer& o, const nlohmann::json& v, const std::string& src, const std::string& l) {
          set(o.*member, v, src, l);
        },
        [=](const Outer& o) { return get(o.*member); }));
  }
  return out;
}

// The rows of a struct as rows over a std::any holding one: how a kind added
// from outside (model/server_kinds.hpp) keeps knobs of a type the settings do
// not know.
template <class Inner>
std::vector<Knob<std::any>> knobs_held(const std::vector<Knob<Inner>>& rows) {
  std::vector<Knob<std::any>> out;
  for (const Knob<Inner>& row : rows) {
    const auto set = row.set;
    const auto get = row.get;
    out.push_back(knob_like<std::any>(
        row, row.key,
        [=](std::any& o, const nlohmann::json& v, const std::string& src, const std::string& l) {
          set(std::any_cast<Inner&>(o), v, src, l);
        },
        [=](const std::any& o) { return get(std::any_cast<const Inner&>(o)); }));
  }
  return out;
}

// A default as a flag's help says it: on/off, a number in its shortest form
// (4e-08 as 4e-8), a word as it is; empty for none.
std::string knob_default_text(const nlohmann::ordered_json& value);

}  // namespace infersim
