#include "split_checks.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstdint>
#include <memory>

#include "collective_checks.h"

namespace hostir::commtest {
namespace {

// The world ranks of `group`'s members in its rank order, by an allgather.
std::vector<int32_t> worldRanksOf(Communicator& group, int worldRank) {
  return exchangeValues(group, static_cast<int32_t>(worldRank));
}

void expectMembers(Communicator& group, int worldRank, const std::vector<int32_t>& want, const std::string& what,
                   std::vector<std::string>& problems) {
  const std::vector<int32_t> got = worldRanksOf(group, worldRank);
  if (got != want)
    problems.push_back(
        fmt::format("{}: members {} (world ranks), expected {}", what, fmt::join(got, ", "), fmt::join(want, ", ")));
}

}  // namespace

std::vector<std::string> checkMeshGroups(Communicator& world, int columns) {
  std::vector<std::string> problems;
  const int rank = world.rank(), size = world.size(), rows = size / columns;
  const int row = rank / columns, column = rank % columns;

  // Along the last axis: the ranks of one row, by column; along the first: of one column, by row.
  std::unique_ptr<Communicator> alongColumns = world.split(row, column);
  std::unique_ptr<Communicator> alongRows = world.split(column, row);
  std::vector<int32_t> rowMembers, columnMembers, reversedMembers;
  for (int c = 0; c < columns; ++c) rowMembers.push_back(row * columns + c);
  for (int r = 0; r < rows; ++r) columnMembers.push_back(r * columns + column);
  for (int r = size - 1; r >= 0; --r) reversedMembers.push_back(r);
  if (alongColumns->size() != columns || alongColumns->rank() != column)
    problems.push_back(fmt::format("the row's group: rank {} of {}, expected {} of {}", alongColumns->rank(),
                                   alongColumns->size(), column, columns));
  if (alongRows->size() != rows || alongRows->rank() != row)
    problems.push_back(fmt::format("the column's group: rank {} of {}, expected {} of {}", alongRows->rank(),
                                   alongRows->size(), row, rows));
  expectMembers(*alongColumns, rank, rowMembers, "the row's group", problems);
  expectMembers(*alongRows, rank, columnMembers, "the column's group", problems);

  // One color, keys that reverse the order.
  std::unique_ptr<Communicator> reversed = world.split(0, -rank);
  expectMembers(*reversed, rank, reversedMembers, "the reversed team", problems);

  constexpr size_t kGroupCounts[] = {0, 7, 1000};
  for (Communicator* group : {alongColumns.get(), alongRows.get()})
    for (Collective collective : kCollectives)
      for (const CollectiveCase& c : casesFor(collective, DType::F32, group->size(), kGroupCounts))
        if (std::string problem = runAndCheck(*group, c); !problem.empty())
          problems.push_back(fmt::format("group of {}: {}", group->size(), problem));
  // The world still matches its calls by order after its groups' calls.
  world.barrier();
  return problems;
}

}  // namespace hostir::commtest
