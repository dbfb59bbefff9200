// Writing the outputs so that a failure leaves nothing behind: files are written into a
// temporary folder beside the destination (where the C compiler also runs for --emit) and
// moved into place only when all of them are complete.
#pragma once

#include "Codegen.h"
#include "support/Status.h"

#include <string>
#include <vector>

namespace odlac {

class Staging {
public:
  // Creates the temporary folder beside `dir`.
  static Expected<Staging> create(const std::string &dir);
  Staging(Staging &&other) noexcept;
  Staging(const Staging &) = delete;
  ~Staging(); // removes the temporary folder and whatever is left in it

  const std::string &path() const { return staging_; }
  std::string pathOf(const std::string &name) const { return staging_ + "/" + name; }
  // Writes a file into the staging folder; it becomes an output unless it is only an
  // intermediate of --emit (the C sources that are compiled into a library).
  Status write(const GeneratedFile &f, bool output = true);
  // Marks a file that something else wrote into the staging folder as an output.
  void adopt(const std::string &name) { outputs_.push_back(name); }
  // Moves every output into `dir` (created if missing); returns their final paths.
  Expected<std::vector<std::string>> commit();

private:
  Staging(std::string dir, std::string staging)
      : dir_(std::move(dir)), staging_(std::move(staging)) {}
  std::string dir_, staging_;
  std::vector<std::string> outputs_;
};

// Writes one file atomically (a temporary sibling, then a rename).
Status writeFileAtomically(const std::string &path, const std::string &contents);

} // namespace odlac
