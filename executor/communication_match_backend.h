// A Backend that proves, while the program runs, what `hostir check` proves
// before it: every rank issues the same communications in the same order
// (kind, dtype, element counts, op, axis, root), each sendrecv paired with
// its peer's sendrecv of the same position; a communication over mesh axes
// among the ranks of its group only, over an exchange split like it. Before it forwards a
// communication, the host of every rank exchanges the communication's
// signature over a communicator of its own; at the end of a run, a marker
// that counts them. A difference is an error at the statement
// ("communication #3 does not match across ranks: ..."), raised on every rank
// before the mismatched communication starts, instead of a transport error
// (MPI_ERR_TRUNCATE) or a hang. `hostir run --unchecked` uses it in place of
// the static proof.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "comm/mesh_groups.h"
#include "ir/ir.h"
#include "runtime/forwarding_backend.h"

namespace hostir {

class CommunicationMatchBackend : public ForwardingBackend {
 public:
  // `signatures`: a communicator used only for the exchanges (never the one
  // the communications use, whose calls stream threads make in their own time);
  // `program` names the mesh axes in the messages.
  CommunicationMatchBackend(Backend& forward, Communicator& signatures, const Program& program);

  void useMesh(const std::vector<int64_t>& extents, const std::vector<uint32_t>& overs) override {
    groups_.use(signatures_, extents, overs);
    overs_ = overs;
    forward_.useMesh(extents, overs);
  }
  void beginRun() override;
  void synchronizeHost() override;
  void collective(Stream* stream, const CollectiveCall& call) override;

 private:
  // Exchanges this rank's signature over `comm` (the team's exchanges, or
  // a group's: `over`); throws DiagnosticError on a mismatch.
  void agree(const CollectiveCall* call, Communicator& comm, uint64_t& issued, uint32_t over);

  Communicator& signatures_;
  const Program& program_;
  MeshGroups groups_;                    // the exchanges' groups, split as the communications' are
  std::vector<uint32_t> overs_;          // the sets of mesh axes the program's communications name
  std::map<uint32_t, uint64_t> issued_;  // per set of axes (0: the team), communications of this run so far
};

}  // namespace hostir
