#include "server/api_store.h"

#include <spdlog/spdlog.h>

#include <ctime>

namespace cairn::server {

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string IsoUtcNow() {
  auto now = std::chrono::system_clock::now();
  std::time_t t = std::chrono::system_clock::to_time_t(now);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

ApiStore::~ApiStore() = default;  // derived destructors call Close() first

void ApiStore::StartWriter() {
  writer_ = std::thread([this] { WriterLoop(); });
}

void ApiStore::SetCommitListener(std::function<void()> f) {
  MutexLock lock(mu_);
  on_commit_ = std::move(f);
}

void ApiStore::Submit(Mutation m, Completion done) {
  {
    MutexLock lock(mu_);
    if (!closing_ && writer_.joinable()) {
      queue_.push_back(Pending{std::move(m), std::move(done)});
      cv_.NotifyOne();
      return;
    }
  }
  done(Status::Unavailable("the store is shutting down"));
}

void ApiStore::Close() {
  {
    MutexLock lock(mu_);
    closing_ = true;
    cv_.NotifyAll();
  }
  if (writer_.joinable()) writer_.join();
}

bool ApiStore::RunMutation(const Mutation& m, WriteTxn& txn) {
  try {
    return m(txn);
  } catch (const std::exception& e) {
    spdlog::error("internal error: mutation threw: {}", e.what());
    return false;
  }
}

void ApiStore::WriterLoop() {
  std::vector<Pending> batch;
  size_t last_batch = 0;
  for (;;) {
    std::function<void()> on_commit;
    {
      MutexLock lock(mu_);
      cv_.Wait(mu_, [&]() REQUIRES(mu_) { return closing_ || !queue_.empty(); });
      if (queue_.empty()) return;  // closing and drained
      if (options_.batch_delay.count() > 0) {
        // The whole delay with the mutex released (submitters' wake-ups
        // do not cut it short), as a sleep would.
        const auto until = std::chrono::steady_clock::now() + options_.batch_delay;
        while (cv_.WaitUntil(mu_, until)) {
        }
      }
      auto take = [&]() REQUIRES(mu_) {
        while (!queue_.empty() && batch.size() < options_.max_batch) {
          batch.push_back(std::move(queue_.front()));
          queue_.pop_front();
        }
      };
      take();
      if (batch.size() < last_batch && !closing_) {
        cv_.WaitUntil(
            mu_, std::chrono::steady_clock::now() + std::chrono::microseconds(400),
            [&]() REQUIRES(mu_) { return closing_ || batch.size() + queue_.size() >= last_batch; });
        take();
      }
      last_batch = batch.size();
      on_commit = on_commit_;
    }
    size_t kept = 0;
    Status st = RunBatch(batch, &kept);
    if (!st.ok()) spdlog::error("store: batch of {} not committed: {}", batch.size(), st.message());
    if (st.ok()) {
      ++commits_;
      committed_mutations_ += kept;
    }
    for (Pending& p : batch) p.done(st);
    batch.clear();
    if (st.ok() && on_commit) on_commit();
  }
}

Status ApiStore::ReplaceTokens(const std::vector<std::pair<std::string, std::string>>& tokens) {
  Status result = Status::Ok();
  std::mutex m;
  std::condition_variable cv;
  bool done = false;
  Submit(
      [&](WriteTxn& txn) {
        result = txn.ReplaceTokens(tokens);
        return result.ok();
      },
      [&](const Status& st) {
        std::lock_guard<std::mutex> lock(m);
        if (!st.ok() && result.ok()) result = st;
        done = true;
        cv.notify_one();
      });
  std::unique_lock<std::mutex> lock(m);
  cv.wait(lock, [&] { return done; });
  return result;
}

bool ApiStore::ClaimLocally(const std::string& scope) {
  MutexLock lock(keys_mu_);
  return keys_.insert(scope).second;
}

void ApiStore::ReleaseLocally(const std::string& scope) {
  MutexLock lock(keys_mu_);
  keys_.erase(scope);
}

Result<ApiStore::KeyClaim> ApiStore::ClaimKey(const std::string& scope) {
  KeyClaim claim;
  claim.claimed = ClaimLocally(scope);
  auto stored = GetResponse(scope);
  if (!stored.ok()) {
    if (claim.claimed) ReleaseLocally(scope);
    return stored.status();
  }
  claim.stored = std::move(*stored);
  return claim;
}

void ApiStore::ReleaseKey(const std::string& scope) { ReleaseLocally(scope); }

Result<std::optional<ApiStore::Bucket>> ApiStore::TakeToken(const std::string&, double, int64_t) {
  return std::optional<Bucket>();
}

}  // namespace cairn::server
