// The pool of OpenBLAS work buffers under an address-space limit: GEMMs
// beyond the buffers reserved wait for one instead of making OpenBLAS map
// another (which it would retry for ever), and a pool that cannot reserve
// even one says so. Each case runs in a child process that limits its own
// address space to what it uses plus 64 MiB, less than one buffer needs.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <functional>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include "executor/cpu/blas_buffers.h"
#include "harness.h"
#include "sanitizers.h"

namespace hostir::cpu {
namespace {

using reftest::limitAddressSpaceToUsedPlus64MiB;

// Runs `body` in a child process, killed after 60 s; returns its exit status
// (128 + the signal when a signal ended it).
int inChild(const std::function<int()>& body) {
  pid_t child = ::fork();
  if (child == 0) {
    ::alarm(60);
    ::_exit(body());
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// A 48 x 48 f32 product of known integers, checked exactly.
bool gemmIsExact(const BlasLibrary& blas) {
  constexpr int n = 48;
  std::vector<float> a(n * n), b(n * n), c(n * n, -1.0f);
  for (int i = 0; i < n * n; ++i) {
    a[i] = static_cast<float>(i % 7);
    b[i] = static_cast<float>(i % 5);
  }
  blas.sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a.data(), n, b.data(), n, 0.0f, c.data(), n);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      double sum = 0;
      for (int k = 0; k < n; ++k) sum += double{a[i * n + k]} * b[k * n + j];
      if (c[i * n + j] != static_cast<float>(sum)) return false;
    }
  return true;
}

// Each case forks a child that caps its own address space.
class BlasBuffers : public ::testing::Test {
 protected:
  void SetUp() override {
    if (hostir::testing::kSanitized)
      GTEST_SKIP() << "a sanitizer's shadow memory does not fit under an address-space limit";
  }
  const BlasLibrary& blas = blasLibrary();
};

TEST_F(BlasBuffers, GemmsBeyondTheReservedBuffersWaitForOne) {
  int status = inChild([&] {
    BlasBufferPool pool(blas);
    pool.acquire();  // reserves the one buffer there is room for
    pool.release();
    limitAddressSpaceToUsedPlus64MiB();
    std::atomic<int> holders{0}, mostHolders{0}, wrong{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t)
      threads.emplace_back([&] {
        for (int i = 0; i < 10; ++i) {
          BlasBufferLease lease(pool);
          int now = ++holders;
          for (int seen = mostHolders; now > seen && !mostHolders.compare_exchange_weak(seen, now);) {
          }
          if (!gemmIsExact(blas)) ++wrong;
          --holders;
        }
      });
    for (std::thread& thread : threads) thread.join();
    if (wrong != 0) return 1;
    if (mostHolders != 1 || pool.reserved() != 1) return 2;
    return 0;
  });
  EXPECT_EQ(status, 0) << "1: a wrong product; 2: more than the one reserved buffer in use; 142: hung";
}

TEST_F(BlasBuffers, NoRoomForEvenOneBufferIsBadAlloc) {
  int status = inChild([&] {
    BlasBufferPool pool(blas);
    limitAddressSpaceToUsedPlus64MiB();
    try {
      pool.acquire();
    } catch (const std::bad_alloc&) {
      return pool.reserved() == 0 ? 0 : 2;
    }
    return 1;
  });
  EXPECT_EQ(status, 0) << "1: a buffer was leased; 2: a buffer counted as reserved";
}

}  // namespace
}  // namespace hostir::cpu
