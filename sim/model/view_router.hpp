// What the scorer and dynamo routers (BATCHING.md section 8) share: the view
// of the replicas' load they route by (RouterView: exact, or refreshed every
// router_refresh_s with their own picks counted), the prefix index their hits
// come from (PrefixIndex: precise or approximate), and the hit they expected
// at their last pick.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <utility>

#include "model/prefix_index.hpp"
#include "model/router.hpp"
#include "model/router_view.hpp"

namespace infersim {

class ViewRouter : public Router {
 public:
  ViewRouter(double refresh_s, PrefixIndex index) : view_(refresh_s), index_(std::move(index)) {}
  std::optional<Duration> refresh_period() const override { return view_.period(); }
  void refresh(std::span<ReplicaScheduler* const> active) override { view_.refresh(active); }
  std::optional<Duration> kv_event_delay() const override { return index_.event_delay(); }
  void kv_event(std::uint32_t replica, const KvEvent& e) override { index_.event(replica, e); }
  std::optional<std::int64_t> predicted_hit_tokens() const override { return predicted_; }

 protected:
  // The router sent `r` to `s`, expecting `hit` tokens there (none: it read
  // no hit): counted in the view, recorded by the index.
  void picked(const ReplicaScheduler& s, const BatchedRequest& r, std::optional<std::int64_t> hit) {
    predicted_ = hit;
    view_.picked(s, r);
    index_.routed(s, r);
  }

  RouterView view_;
  PrefixIndex index_;

 private:
  std::optional<std::int64_t> predicted_;
};

}  // namespace infersim
