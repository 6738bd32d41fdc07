// workspace_pool.hpp: the one pool of per-device CUDA workspaces, for the backend's host engine
// (host_engine.cu: the bulk kernels' staging slots) and the batch executor (cuda_batch.cu:
// its grown-on-demand buffers). What a workspace holds is its user's; how workspaces are kept,
// lent, wiped and given back is written once, here.
//
// A workspace is lent to one call at a time, so its pinned and device buffers (and streams) are
// allocated once per concurrent caller per device, not once per call. A Lease gives it back on
// scope exit after wipe() zeroed what the call left in it; when wipe() throws (a context broken
// by a kernel fault) the workspace is leaked, never freed into that context nor lent again. The
// pools are never destroyed: freeing CUDA memory during static destruction can run after the
// runtime has shut down.
//
// A Workspace type provides: explicit Workspace(int device_index), int device_index() const,
// void wipe().
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <vector>

namespace gpucrypt::cuda {

template <class Workspace>
class WorkspacePool {
 public:
  static WorkspacePool& instance() {
    static auto* pool = new WorkspacePool;  // never destroyed (see above)
    return *pool;
  }

  std::unique_ptr<Workspace> acquire(int device_index) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto& free = free_[device_index];
      if (!free.empty()) {
        auto ws = std::move(free.back());
        free.pop_back();
        return ws;
      }
    }
    return std::make_unique<Workspace>(device_index);  // outside the lock: it allocates on the GPU
  }

  void release(std::unique_ptr<Workspace> ws) {
    std::lock_guard<std::mutex> lock(mutex_);
    free_[ws->device_index()].push_back(std::move(ws));
  }

 private:
  WorkspacePool() = default;
  std::mutex mutex_;
  std::map<int, std::vector<std::unique_ptr<Workspace>>> free_;
};

// One call's workspace: wiped and returned on scope exit, or leaked when the device no longer
// answers.
template <class Workspace>
class Lease {
 public:
  explicit Lease(int device_index) : ws_(WorkspacePool<Workspace>::instance().acquire(device_index)) {}
  ~Lease() {
    try {
      ws_->wipe();
      WorkspacePool<Workspace>::instance().release(std::move(ws_));
    } catch (...) {
      (void)ws_.release();
    }
  }
  Lease(const Lease&) = delete;
  Lease& operator=(const Lease&) = delete;
  Workspace* operator->() const { return ws_.get(); }
  Workspace& operator*() const { return *ws_; }

 private:
  std::unique_ptr<Workspace> ws_;
};

}  // namespace gpucrypt::cuda
