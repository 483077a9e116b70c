// The files commands write, on the disk: `cairn fmt` rewrites a manifest as
// the file it was (a symbolic link's target, its mode and owner) or refuses
// with the reason, and `cairn plan --out` replaces only a plan (or an empty
// file), never a file of the stack.
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>

#include "tests/support/process.h"

namespace file_write_test {  // one namespace per test file: see tests/CMakeLists.txt

using namespace cairn::testing;

namespace {

const std::string kMessy = "kind:   network   \nname: app\nspec:\n    region: eu-central\n";
const std::string kTidy = "kind: network\nname: app\nspec:\n  region: eu-central\n";

struct stat Lstat(const std::string& path) {
  struct stat st {};
  REQUIRE(lstat(path.c_str(), &st) == 0);
  return st;
}

// The umask of this process while it lives (inherited by the cairn run).
class ScopedUmask {
 public:
  explicit ScopedUmask(mode_t mask) : old_(umask(mask)) {}
  ~ScopedUmask() { umask(old_); }

 private:
  mode_t old_;
};

}  // namespace

TEST_CASE("cairn fmt rewrites a symbolic link's target and keeps the link") {
  TempDir dir;
  const std::string real = dir.path() + "/shared/network.yaml";
  const std::string link = dir.path() + "/stack/network.yaml";
  WriteFile(real, kMessy);
  std::filesystem::create_directories(dir.path() + "/stack");
  REQUIRE(symlink("../shared/network.yaml", link.c_str()) == 0);
  auto r = RunCairn({"fmt", dir.path() + "/stack"});
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.out == "formatted " + link + "\n");
  CHECK(S_ISLNK(Lstat(link).st_mode));
  CHECK(ReadFile(real) == kTidy);
  // Nothing left beside either.
  for (const char* sub : {"/shared", "/stack"})
    for (const auto& e : std::filesystem::directory_iterator(dir.path() + sub))
      CHECK(e.path().filename() == "network.yaml");
}

TEST_CASE("cairn fmt keeps a file's mode exactly, whatever the umask") {
  TempDir dir;
  const std::string file = dir.path() + "/main.yaml";
  WriteFile(file, kMessy);
  REQUIRE(chmod(file.c_str(), 0664) == 0);
  ScopedUmask mask(022);
  auto r = RunCairn({"fmt", file});
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK(ReadFile(file) == kTidy);
  CHECK((Lstat(file).st_mode & 07777) == 0664);
}

TEST_CASE("cairn fmt refuses a read-only file and one with other hard links, changing neither") {
  TempDir dir;
  const std::string ro = dir.path() + "/ro.yaml";
  WriteFile(ro, kMessy);
  REQUIRE(chmod(ro.c_str(), 0444) == 0);
  const std::string a = dir.path() + "/a.yaml", b = dir.path() + "/b.yaml";
  WriteFile(a, kMessy);
  REQUIRE(link(a.c_str(), b.c_str()) == 0);
  const ino_t ro_inode = Lstat(ro).st_ino;

  auto r = RunCairn({"fmt", ro, a});
  CHECK(r.exit_code == 1);
  CHECK(r.out.empty());
  CHECK(r.err.find("error: " + ro +
                   " is read-only (mode 0444): not rewritten; make it writable to format it\n") !=
        std::string::npos);
  CHECK(r.err.find("error: " + a +
                   " has 2 hard links: not rewritten, as replacing it would leave the other "
                   "names with the old text") != std::string::npos);
  CHECK(ReadFile(ro) == kMessy);
  CHECK(Lstat(ro).st_ino == ro_inode);
  CHECK((Lstat(ro).st_mode & 07777) == 0444);
  CHECK(ReadFile(a) == kMessy);
  CHECK(Lstat(a).st_ino == Lstat(b).st_ino);
  CHECK(Lstat(a).st_nlink == 2);
  // --check still reports them.
  auto check = RunCairn({"fmt", "--check", ro, a});
  CHECK(check.exit_code == 1);
  CHECK(check.out == ro + "\n" + a + "\n");
}

TEST_CASE("cairn fmt run as root gives another user's file back to them") {
  if (geteuid() != 0) {
    WARN("not root: the owner cannot be given back, and the refusal is tested below");
    return;
  }
  TempDir dir;
  const std::string file = dir.path() + "/theirs.yaml";
  WriteFile(file, kMessy);
  REQUIRE(chown(file.c_str(), 65534, 65534) == 0);
  REQUIRE(chmod(file.c_str(), 0640) == 0);
  auto r = RunCairn({"fmt", file});
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK(ReadFile(file) == kTidy);
  const struct stat st = Lstat(file);
  CHECK(st.st_uid == 65534);
  CHECK(st.st_gid == 65534);
  CHECK((st.st_mode & 07777) == 0640);
}

TEST_CASE("cairn fmt run by another user refuses a file it could only take over") {
  // A file of root's, writable by everyone, in a directory everyone may
  // write: the rename would succeed and make the file the caller's.
  if (geteuid() != 0 || access("/usr/bin/setpriv", X_OK) != 0) {
    WARN("needs root and setpriv to run cairn as another user");
    return;
  }
  TempDir dir;
  const std::string file = dir.path() + "/roots.yaml";
  WriteFile(file, kMessy);
  REQUIRE(chmod(file.c_str(), 0666) == 0);
  REQUIRE(chmod(dir.path().c_str(), 0777) == 0);
  // The binary must be reachable by that user.
  auto probe = RunCommand({"/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                           CairnBinary(), "--version"});
  if (probe.exit_code != 0) {
    WARN("user 65534 cannot run " << CairnBinary() << ": " << probe.err);
    return;
  }
  auto r = RunCommand({"/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                       CairnBinary(), "fmt", file});
  CHECK(r.exit_code == 1);
  CHECK(r.err == "error: " + file +
                     " belongs to another user (uid 0): not rewritten, as the new file would be "
                     "yours\n");
  CHECK(ReadFile(file) == kMessy);
  CHECK(Lstat(file).st_uid == 0);
}

namespace {

const std::string kStack =
    "kind: network\nname: app\nspec: {region: eu-central, cidr: 10.30.0.0/16}\n";

// A stack, planned without the API (--refresh=false, an empty state).
struct PlanFixture {
  PlanFixture() { WriteFile(stack + "/main.yaml", kStack); }
  CommandResult Plan(std::vector<std::string> extra) const {
    std::vector<std::string> args = {"plan", stack, "--refresh=false"};
    args.insert(args.end(), extra.begin(), extra.end());
    return RunCairn(args, {{"NO_COLOR", "1"}});
  }
  TempDir dir;
  std::string stack = dir.path() + "/stack";
};

}  // namespace

TEST_CASE("plan --out never overwrites a manifest of the stack, even with --force") {
  PlanFixture f;
  const std::string main = f.stack + "/main.yaml";
  for (bool force : {false, true}) {
    CAPTURE(force);
    auto r = force ? f.Plan({"--out", main, "--force"}) : f.Plan({"--out", main});
    CHECK(r.exit_code == 1);
    CHECK(r.err == "error: " + main +
                       " is a file of the stack: not overwritten (even with --force); save the "
                       "plan elsewhere\n");
    CHECK(ReadFile(main) == kStack);
  }
  // Nor through another spelling of its path, nor with --html.
  auto other = f.Plan({"--html", f.stack + "/../stack/./main.yaml"});
  CHECK(other.exit_code == 1);
  CHECK(other.err.find("is " + f.stack + "/main.yaml, a file of the stack") != std::string::npos);
  CHECK(ReadFile(main) == kStack);
}

TEST_CASE("plan --out replaces a plan or an empty file, and another file only with --force") {
  PlanFixture f;
  const std::string notes = f.dir.path() + "/notes.txt";
  WriteFile(notes, "my notes\n");
  auto refused = f.Plan({"--out", notes});
  CHECK(refused.exit_code == 1);
  CHECK(refused.err == "error: " + notes +
                           " exists and is not a Cairn plan: not overwritten; pass --force to "
                           "replace it, or save the plan elsewhere\n");
  CHECK(ReadFile(notes) == "my notes\n");

  // An empty file (mktemp's) and an earlier plan are replaced.
  const std::string plan = f.dir.path() + "/web.plan";
  WriteFile(plan, "");
  auto first = f.Plan({"--out", plan});
  INFO(first.err);
  REQUIRE(first.exit_code == 0);
  const std::string saved = ReadFile(plan);
  CHECK(saved.find("\"format_version\"") != std::string::npos);
  CHECK((Lstat(plan).st_mode & 07777) == 0600);
  WriteFile(f.stack + "/main.yaml", kStack +
                                        "---\nkind: network\nname: db\n"
                                        "spec: {region: eu-central, cidr: 10.40.0.0/16}\n");
  auto again = f.Plan({"--out", plan});
  INFO(again.err);
  CHECK(again.exit_code == 0);
  CHECK(ReadFile(plan) != saved);

  // --force replaces the notes.
  auto forced = f.Plan({"--out", notes, "--force"});
  INFO(forced.err);
  CHECK(forced.exit_code == 0);
  CHECK(ReadFile(notes).find("\"format_version\"") != std::string::npos);
}

}  // namespace file_write_test
