// Whether the tests run instrumented by a sanitizer, for the few whose
// measure a sanitizer's runtime changes: resident memory (quarantine,
// shadow), limits on address space (the shadow does not fit) and fixed
// amounts of work (instrumented, they take minutes). GCC says so with
// __SANITIZE_ADDRESS__ and __SANITIZE_THREAD__, clang with __has_feature.
#pragma once

#if defined(__SANITIZE_ADDRESS__)
#define HOSTIR_TESTS_ADDRESS_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define HOSTIR_TESTS_ADDRESS_SANITIZER 1
#endif
#endif

#if defined(__SANITIZE_THREAD__)
#define HOSTIR_TESTS_THREAD_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define HOSTIR_TESTS_THREAD_SANITIZER 1
#endif
#endif

namespace hostir::testing {

#ifdef HOSTIR_TESTS_ADDRESS_SANITIZER
inline constexpr bool kAddressSanitizer = true;
#else
inline constexpr bool kAddressSanitizer = false;
#endif

#ifdef HOSTIR_TESTS_THREAD_SANITIZER
inline constexpr bool kThreadSanitizer = true;
#else
inline constexpr bool kThreadSanitizer = false;
#endif

inline constexpr bool kSanitized = kAddressSanitizer || kThreadSanitizer;

}  // namespace hostir::testing
