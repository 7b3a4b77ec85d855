// The registry of backends: names, the order `auto` tries them, and the
// choice it makes, against what each entry says of itself.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "comm/in_process_communicator.h"
#include "executor/backend_registry.h"

namespace hostir {
namespace {

TEST(BackendRegistry, NamesAreUniqueAndRequestable) {
  std::set<std::string_view> names;
  for (const BackendEntry* entry : registeredBackends()) {
    EXPECT_TRUE(names.insert(entry->name).second) << entry->name << " is registered twice";
    EXPECT_TRUE(isBackendRequest(entry->name));
    EXPECT_EQ(findBackend(entry->name), entry);
    EXPECT_EQ(registeredKind(entry->name), BackendKind{entry->name});
    EXPECT_NE(entry->create, nullptr) << entry->name;
    EXPECT_NE(entry->built, nullptr) << entry->name;
  }
  EXPECT_TRUE(isBackendRequest("auto"));
  EXPECT_FALSE(isBackendRequest("tpu"));
  EXPECT_EQ(findBackend("tpu"), nullptr);
  EXPECT_THROW(registeredKind("tpu"), std::logic_error);
  EXPECT_EQ(backendNames().size(), names.size() + 1);
}

// Devices first; the CPU, which can always run, last.
TEST(BackendRegistry, TheCpuComesLastAndCanAlwaysRun) {
  const BackendEntry& last = *registeredBackends().back();
  EXPECT_EQ(last.name, "cpu");
  EXPECT_FALSE(last.device);
  EXPECT_TRUE(last.built());
  EXPECT_EQ(last.unavailable, nullptr);
  for (const BackendEntry* entry : registeredBackends().first(registeredBackends().size() - 1))
    EXPECT_TRUE(entry->device) << entry->name;
}

// Auto takes the first entry that can serve the team; a named request takes
// that entry, with its reason when it cannot.
TEST(BackendRegistry, AutoChoosesTheFirstThatCanServe) {
  const TeamPlace team{true, 2, 2};
  BackendKind expected = BackendKind::Cpu;
  for (const BackendEntry* entry : registeredBackends()) {
    if (entry->unavailable && entry->unavailable()) continue;
    expected = BackendKind{entry->name};
    break;
  }
  EXPECT_EQ(chooseBackend("auto", CommunicatorChoice::Auto, team).kind, expected);
  for (const BackendEntry* entry : registeredBackends()) {
    BackendChoice named = chooseBackend(entry->name, CommunicatorChoice::Auto, team);
    EXPECT_EQ(named.kind, BackendKind{entry->name});
    const bool unavailable = entry->unavailable && entry->unavailable();
    EXPECT_EQ(named.refusal.has_value(), unavailable) << entry->name;
    if (named.refusal) EXPECT_EQ(named.refusal->rfind(std::string(entry->name) + ": ", 0), 0u) << *named.refusal;
  }
}

TEST(BackendRegistry, TheCpuEntryMakesABackendForARank) {
  InProcessTeam team(1);
  std::unique_ptr<Communicator> comm = team.communicator(0);
  BackendOptions options;
  options.kind = registeredKind("cpu");
  RankBackend made = createBackend(options, *comm);
  ASSERT_NE(made.backend, nullptr);
  EXPECT_EQ(made.backend->name(), "cpu");
}

}  // namespace
}  // namespace hostir
