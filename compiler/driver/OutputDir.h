// Writing the outputs so that a failure leaves nothing behind: files are written into a
// temporary folder beside the destination (where the C compiler also runs for --emit) and
// moved into place only when all of them are complete. Missing parent folders of the
// destination are created (and removed again when the compile fails).
//
// The destination's `.odlac-outputs-NAME` lists the files the last compile of model NAME into
// it wrote, one name a line: the next compile of NAME there removes those it does not write
// again (plain files only, named without a '/', and not rewritten since, as another model's
// compile may do with main.c), and never anything else.
//
// Interrupted compiles clean up too. SIGINT, SIGTERM and SIGHUP stop the child tool a compile
// waits for, remove the staging folders and temporary files, then end odlac by the same
// signal (installCleanupHandlers; the handler makes system calls only, so it is
// async-signal-safe). A compile killed outright (SIGKILL, a crash, a power cut) leaves its
// folder; the next compile into the same parent removes it. Staging folders are named
// .odlac-tmp-<pid>-XXXXXX and their owner holds a lock on each (flock) until it exits: only a
// folder of that name, owned by this user, whose process is gone and whose lock is free is
// removed, never the folder of a compile still running (in any PID namespace) and nothing
// that is not odlac's.
#pragma once

#include "Codegen.h"
#include "support/Status.h"

#include <string>
#include <sys/types.h>
#include <vector>

namespace odlac {

// Installs the SIGINT, SIGTERM and SIGHUP handlers that remove what an interrupted compile
// staged. Called once, by main.
void installCleanupHandlers();

// Starts argv[0] with `argv` in `dir` (stdout joined to stderr) and waits for it; a cleanup
// signal meanwhile stops it first. Returns the wait status, or -1 with errno set.
int runChild(const std::string &dir, const std::vector<std::string> &argv);

class Staging {
public:
  // Creates the temporary folder beside `dir` (and `dir`'s missing parents), after removing
  // stale ones there, for the outputs of model `name`.
  static Expected<Staging> create(const std::string &dir, const std::string &name);
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
  // Where commit() will put the outputs.
  std::vector<std::string> destinations() const;
  // Moves every output into `dir` (created if missing), with the cleanup signals held off so
  // that an interrupt leaves all of them or none, removes the files of the previous compile
  // that are not outputs now and writes the new list; returns the outputs' final paths.
  Expected<std::vector<std::string>> commit();

private:
  Staging(std::string dir, std::string staging, std::string list, int fd, int slot,
          std::vector<std::string> createdParents)
      : dir_(std::move(dir)), staging_(std::move(staging)), list_(std::move(list)), fd_(fd),
        slot_(slot), createdParents_(std::move(createdParents)) {}
  std::string dir_, staging_;
  std::string list_;                        // the name of the list of outputs
  int fd_ = -1;                             // the staging folder, open and locked while it exists
  int slot_ = -1;                           // in the cleanup registry
  std::vector<std::string> createdParents_; // outermost first; removed unless committed
  bool committed_ = false;
  std::vector<std::string> outputs_;
};

// Creates `dir` and its missing parents; returns the folders it created, outermost first.
Expected<std::vector<std::string>> makeFolders(const std::string &dir);

// Writes one file atomically (a temporary sibling, then a rename).
Status writeFileAtomically(const std::string &path, const std::string &contents);

} // namespace odlac
