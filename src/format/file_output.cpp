// file_output.cpp: output files that appear only when complete (format.hpp AtomicOutput), and
// whole files by path (seal_path / open_path). One place for these rules: the CLI and
// gpucrypt.fileformat (atomic_output, encrypt_file, decrypt_file) and the C API's
// gc_file_seal_path / gc_file_open_path all come here, and the MPI mode's rank 0 too (a named
// temporary that the other ranks open by its path). docs/file-format.md "Plaintext release" says
// what a user gets.
//
// Every error names the path the user gave, never a temporary or resolved name: the temporary
// is ours, and a message about `.out.gcx.4711.3f2a...gpucrypt-tmp` tells the user nothing.
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <tuple>
#include <utility>

#include "gpucrypt/format.hpp"

namespace gpucrypt::format {

namespace {

constexpr std::string_view kTempSuffix = ".gpucrypt-tmp";
// Errors of a write that only the output can have caused (a full disk, a spent quota, a file size limit).
bool output_full(int error_number) { return error_number == ENOSPC || error_number == EDQUOT || error_number == EFBIG; }

std::string dirname_of(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return "";
  return slash == 0 ? "/" : path.substr(0, slash);
}

std::string basename_of(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string joined(const std::string& directory, const std::string& name) {
  if (directory.empty()) return name;
  return directory.back() == '/' ? directory + name : directory + "/" + name;
}

std::string absolute(const std::string& path) {
  if (!path.empty() && path[0] == '/') return path;
  char cwd[PATH_MAX];
  if (::getcwd(cwd, sizeof cwd) == nullptr) return path;
  return joined(cwd, path);
}

// The directory's real path where it exists (the kernel resolves its links), else as given.
std::string real_directory(const std::string& directory) {
  char* real = ::realpath(directory.empty() ? "." : directory.c_str(), nullptr);
  if (real == nullptr) return directory;
  std::string result(real);
  std::free(real);
  return result;
}

struct Resolved {
  std::string path;           // where the links lead (the last one may name nothing yet)
  bool through_proc = false;  // some step went through /proc: a path to what a descriptor has open
};

// `path` with every link followed, the last one too even when it names nothing yet (a dangling
// link's target is where the output goes); at most 40 links, the kernel's own limit on a chain.
// /dev/stdout, /dev/fd/N and /proc/self/fd/N lead through /proc: they name what a descriptor has
// open (a pipe, a terminal, a file the shell opened, perhaps for appending), to be written
// through like stdout, never replaced.
Resolved resolve_links(const std::string& path) {
  Resolved resolved{absolute(path)};
  for (int step = 0; step < 40; ++step) {
    const std::string directory = real_directory(dirname_of(resolved.path));
    resolved.path = joined(directory, basename_of(resolved.path));
    if (resolved.path.rfind("/proc/", 0) == 0) resolved.through_proc = true;
    char target[PATH_MAX];
    const ssize_t n = ::readlink(resolved.path.c_str(), target, sizeof target - 1);
    if (n < 0) return resolved;  // not a link, or nothing there
    const std::string next(target, static_cast<size_t>(n));
    resolved.path = next[0] == '/' ? next : joined(directory, next);
  }
  return resolved;
}

[[noreturn]] void fail(int error_number, const std::string& shown_path) { throw PathError(error_number, shown_path); }

int open_directory(const std::string& directory) {
  return ::open(directory.empty() ? "." : directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

// Names the open anonymous file `fd` as directory/name (linkat(AT_SYMLINK_FOLLOW) on
// /proc/self/fd/N, the documented way: open(2)); errno on failure (EEXIST: the name is taken).
int link_anonymous_as(int fd, const std::string& directory, const std::string& name) {
  const int directory_fd = open_directory(directory);
  if (directory_fd < 0) return errno;
  const std::string proc_path = "/proc/self/fd/" + std::to_string(fd);
  const int result = ::linkat(AT_FDCWD, proc_path.c_str(), directory_fd, name.c_str(), AT_SYMLINK_FOLLOW);
  const int error_number = result == 0 ? 0 : errno;
  ::close(directory_fd);
  return error_number;
}

// A new named temporary file for final_name in `directory`, mode 0600: (its path, its fd).
std::pair<std::string, int> create_named_temp(const std::string& directory, const std::string& final_name) {
  for (int attempt = 0;; ++attempt) {
    const std::string path = joined(directory, temp_name(final_name));
    const int fd = ::open(path.empty() ? "." : path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd >= 0) return {path, fd};
    if (errno != EEXIST || attempt == 100) throw std::system_error(errno, std::generic_category());
  }
}

void write_fully(int fd, const uint8_t* data, size_t length) {
  while (length > 0) {
    const ssize_t n = ::write(fd, data, length);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw std::system_error(errno, std::generic_category());
    data += n;
    length -= static_cast<size_t>(n);
  }
}

// Gives a complete anonymous file a temporary name (the caller renames it into place). Where
// linking through /proc is refused (a restricted /proc), its contents are copied into a named
// temporary file instead.
std::string name_anonymous(int fd, const std::string& directory, const std::string& final_name) {
  const std::string name = temp_name(final_name);
  if (link_anonymous_as(fd, directory, name) == 0) return joined(directory, name);
  auto [path, copy_fd] = create_named_temp(directory, final_name);
  try {
    std::vector<uint8_t> block(1 << 20);
    for (off_t offset = 0;;) {
      const ssize_t n = ::pread(fd, block.data(), block.size(), offset);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) throw std::system_error(errno, std::generic_category());
      if (n == 0) break;
      write_fully(copy_fd, block.data(), static_cast<size_t>(n));
      offset += n;
    }
    if (::fsync(copy_fd) != 0) throw std::system_error(errno, std::generic_category());
  } catch (...) {
    ::close(copy_fd);
    ::unlink(path.c_str());
    throw;
  }
  ::close(copy_fd);
  return path;
}

// Gives the complete temporary file (temp_path, or the anonymous fd when temp_path is "") the
// name `target`. Overwriting, a rename; else a hard link, which fails with EEXIST if `target`
// appeared since it was checked, where a rename would replace it. The temporary name, if any, is
// gone afterwards, failure or not. Throws std::system_error.
void publish(const std::string& temp_path, int fd, const std::string& directory, const std::string& target,
             bool overwrite) {
  if (temp_path.empty() && !overwrite) {
    const int error_number = link_anonymous_as(fd, directory, basename_of(target));
    if (error_number == 0) return;
    if (error_number == EEXIST) throw std::system_error(EEXIST, std::generic_category());
    // a restricted /proc: name it first, as below
  }
  const std::string source = temp_path.empty() ? name_anonymous(fd, directory, basename_of(target)) : temp_path;
  int error_number = 0;
  if (overwrite) {
    if (::rename(source.c_str(), target.c_str()) != 0) error_number = errno;
  } else if (::link(source.c_str(), target.c_str()) != 0) {
    error_number = errno;
    if (error_number != EEXIST) {  // no hard links on this file system
      struct stat status {};
      if (::lstat(target.c_str(), &status) == 0) error_number = EEXIST;
      else error_number = ::rename(source.c_str(), target.c_str()) == 0 ? 0 : errno;
    }
  }
  ::unlink(source.c_str());  // gone already after a rename
  if (error_number != 0) throw std::system_error(error_number, std::generic_category());
}

}  // namespace

PathError::PathError(int error_number, std::string path, std::string detail)
    : std::system_error(error_number, std::generic_category(),
                        path + ": " + std::strerror(error_number) + (detail.empty() ? "" : " (" + detail + ")")),
      path_(std::move(path)),
      detail_(std::move(detail)) {}

bool anonymous_files_work() {
#ifdef O_TMPFILE
  struct stat status {};
  return ::stat("/proc/self/fd", &status) == 0 && S_ISDIR(status.st_mode);
#else
  return false;
#endif
}

std::string temp_name(std::string_view final_name) {
  uint8_t random[6] = {};
  if (::getrandom(random, sizeof random, 0) != static_cast<ssize_t>(sizeof random))
    throw std::system_error(errno, std::generic_category(), "getrandom");
  char hex[13];
  for (size_t i = 0; i < sizeof random; ++i) std::snprintf(hex + 2 * i, 3, "%02x", random[i]);
  std::string name(".");  // appended piece by piece: GCC 12's -Wrestrict misreads "." + std::string
  name.append(final_name).append(".").append(std::to_string(::getpid())).append(".").append(hex).append(kTempSuffix);
  return name;
}

std::vector<std::string> remove_stale_temps(const std::string& directory, std::string_view final_name) {
  std::vector<std::string> removed;
  DIR* listing = ::opendir(directory.empty() ? "." : directory.c_str());
  if (listing == nullptr) return removed;
  const std::string prefix = std::string(".").append(final_name).append(".");
  std::vector<std::string> names;
  while (const dirent* entry = ::readdir(listing)) names.emplace_back(entry->d_name);
  ::closedir(listing);
  for (const std::string& name : names) {
    if (name.size() < prefix.size() + kTempSuffix.size() || name.rfind(prefix, 0) != 0 ||
        name.compare(name.size() - kTempSuffix.size(), kTempSuffix.size(), kTempSuffix) != 0)
      continue;
    const std::string middle = name.substr(prefix.size(), name.size() - prefix.size() - kTempSuffix.size());
    const std::string owner = middle.substr(0, middle.find('.'));
    if (owner.empty() || owner.size() > 9 || owner.find_first_not_of("0123456789") != std::string::npos) continue;
    const pid_t pid = static_cast<pid_t>(std::stol(owner));
    if (pid == ::getpid()) continue;
    if (::kill(pid, 0) == 0 || errno == EPERM) continue;  // the owner still runs (EPERM: someone else's)
    const std::string path = joined(directory, name);
    struct stat status {};
    if (::lstat(path.c_str(), &status) == 0 && status.st_uid == ::getuid() && ::unlink(path.c_str()) == 0)
      removed.push_back(path);
  }
  return removed;
}

void fsync_directory(const std::string& directory) {
  const int fd = open_directory(directory);
  if (fd < 0) return;
  const int error_number = ::fsync(fd) == 0 ? 0 : errno;
  ::close(fd);
  // Some file systems cannot fsync a directory; the rename has happened either way.
  if (error_number != 0 && error_number != EINVAL && error_number != ENOTSUP && error_number != EBADF)
    throw PathError(error_number, directory);
}

namespace {

// What writing `shown_path` means: the path to write (links followed), whether something is
// there (and its status), and whether to write in place. Errors name shown_path.
struct OutputTarget {
  std::string path;
  bool exists = false;
  struct stat status {};
  bool in_place = false;
};

OutputTarget output_target(const std::string& shown_path) {
  if (shown_path.empty()) fail(ENOENT, shown_path);
  OutputTarget target;
  if (::stat(shown_path.c_str(), &target.status) != 0) {  // the kernel follows every link, /dev/stdout's too
    if (errno != ENOENT) fail(errno, shown_path);
    target.path = resolve_links(shown_path).path;
    return target;
  }
  target.exists = true;
  if (S_ISDIR(target.status.st_mode)) fail(EISDIR, shown_path);
  const Resolved resolved = resolve_links(shown_path);
  target.in_place = !S_ISREG(target.status.st_mode) || resolved.through_proc;
  target.path = target.in_place ? shown_path : resolved.path;
  return target;
}

}  // namespace

bool output_exists(const std::string& path) {
  const OutputTarget target = output_target(path);
  return target.exists && !target.in_place;
}

namespace {
void refuse_same_file(const struct stat& input, const std::string& output_path) {
  struct stat output {};
  if (::stat(output_path.c_str(), &output) == 0 && input.st_dev == output.st_dev && input.st_ino == output.st_ino)
    throw std::invalid_argument(output_path + ": the output would overwrite the input");
}
}  // namespace

void refuse_input_as_output(const std::string& input_path, const std::string& output_path) {
  struct stat input {};
  if (::stat(input_path.c_str(), &input) == 0) refuse_same_file(input, output_path);
}

AtomicOutput::AtomicOutput(std::string path, const OutputOptions& options)
    : shown_path_(std::move(path)), options_(options) {
  struct stat input {};
  if (options.input_fd >= 0 && ::fstat(options.input_fd, &input) == 0) refuse_same_file(input, shown_path_);
  const OutputTarget target = output_target(shown_path_);
  target_ = target.path;
  if (target.in_place) {
    in_place_ = true;
    const int truncate = S_ISREG(target.status.st_mode) ? O_TRUNC : 0;
    fd_ = ::open(target_.c_str(), O_WRONLY | truncate | O_NOCTTY | O_CLOEXEC);
    if (fd_ < 0) fail(errno, shown_path_);
    return;
  }
  if (target.exists && !options.overwrite) fail(EEXIST, shown_path_);
  if (target.exists) {
    replaces_ = true;
    replaced_mode_ = target.status.st_mode & 07777;
    replaced_uid_ = target.status.st_uid;
    replaced_gid_ = target.status.st_gid;
  }
  directory_ = dirname_of(target_);
  const std::string final_name = basename_of(target_);
  remove_stale_temps(directory_, final_name);
#ifdef O_TMPFILE
  if (options.anonymous && anonymous_files_work()) {
    fd_ = ::open(directory_.empty() ? "." : directory_.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd_ >= 0) return;
    if (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL) fail(errno, shown_path_);
  }
#endif
  try {
    std::tie(temp_path_, fd_) = create_named_temp(directory_, final_name);
  } catch (const std::system_error& error) {
    fail(error.code().value(), shown_path_);
  }
}

AtomicOutput::~AtomicOutput() { discard(); }

void AtomicOutput::discard() noexcept {
  if (finished_) return;
  finished_ = true;
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  if (!temp_path_.empty()) ::unlink(temp_path_.c_str());
}

void AtomicOutput::write(ByteSpan data) {
  if (finished_) throw std::logic_error("AtomicOutput: write after commit or discard");
  try {
    write_fully(fd_, data.data(), data.size());
  } catch (const std::system_error& error) {  // a full disk or quota among them: the user's path, never the temporary
    fail(error.code().value(), shown_path_);
  }
}

void AtomicOutput::commit() {
  if (finished_) throw std::logic_error("AtomicOutput: already committed or discarded");
  try {
    if (!in_place_) {
      if (::fsync(fd_) != 0) throw std::system_error(errno, std::generic_category());
      if (replaces_) {  // the replaced file's mode, and its owner where permitted (else the file stays ours)
        if (::fchmod(fd_, replaced_mode_) != 0) throw std::system_error(errno, std::generic_category());
        if ((replaced_uid_ != ::geteuid() || replaced_gid_ != ::getegid()) &&
            ::fchown(fd_, replaced_uid_, replaced_gid_) != 0 && errno != EPERM)
          throw std::system_error(errno, std::generic_category());
      }
      if (options_.mode >= 0 && ::fchmod(fd_, static_cast<mode_t>(options_.mode)) != 0)
        throw std::system_error(errno, std::generic_category());
      publish(temp_path_, fd_, directory_, target_, options_.overwrite);
      temp_path_.clear();
    }
    const int fd = fd_;
    fd_ = -1;
    finished_ = true;
    if (::close(fd) != 0 && errno != EINTR) throw std::system_error(errno, std::generic_category());
  } catch (const std::system_error& error) {
    discard();
    fail(error.code().value(), shown_path_);
  }
  if (!in_place_) {
    try {
      fsync_directory(directory_);
    } catch (const PathError& error) {
      fail(error.code().value(), shown_path_);
    }
  }
}

std::string naming_input(std::string_view message, std::string_view path) {
  if (path.empty() || path == "-") return std::string(message);
  constexpr std::string_view kWrongKey = "wrong passphrase or key";
  if (message.substr(0, kWrongKey.size()) == kWrongKey)
    return std::string(kWrongKey) + " for " + std::string(path) + std::string(message.substr(kWrongKey.size()));
  return std::string(path) + ": " + std::string(message);
}

namespace {

// Runs `body(in_fd, out_fd)` from in_path into an AtomicOutput of out_path, committed only when
// body returns; errors name the paths given.
template <class Body>
uint64_t between_paths(const std::string& in_path, const std::string& out_path, OutputOptions output, Body&& body) {
  const int in_fd = ::open(in_path.c_str(), O_RDONLY | O_CLOEXEC);
  if (in_fd < 0) fail(errno, in_path);
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{in_fd};
  output.input_fd = in_fd;
  AtomicOutput out(out_path, output);
  uint64_t plaintext_len = 0;
  try {
    plaintext_len = body(in_fd, out.fd());
  } catch (const FileError& error) {
    const std::string what = error.what();  // "<context> (<detail>): <strerror>"
    std::string detail = what.substr(0, what.find(": "));
    const size_t open = detail.find(" (");
    detail = open == std::string::npos ? "" : detail.substr(open + 2, detail.size() - open - 3);
    throw PathError(error.code().value(), error.on_output ? out_path : in_path, detail);
  } catch (const DecryptionError& error) {
    throw DecryptionError(naming_input(error.what(), in_path), error.chunk_index, error.released_len);
  } catch (const FormatError& error) {  // not a gpucrypt file, a header cut short, a key of the wrong kind
    throw FormatError(naming_input(error.what(), in_path));
  } catch (const std::system_error& error) {  // a stream path's write (a device, a FIFO) found no room
    if (output_full(error.code().value())) throw PathError(error.code().value(), out_path);
    throw;
  }
  out.commit();
  return plaintext_len;
}

}  // namespace

uint64_t seal_path(const std::string& in_path, const std::string& out_path, ByteSpan key, uint32_t chunk_len,
                   const PipelineOptions& options, const OutputOptions& output) {
  return between_paths(in_path, out_path, output,
                       [&](int in_fd, int out_fd) { return seal_fd(in_fd, out_fd, key, chunk_len, options); });
}

uint64_t open_path(const std::string& in_path, const std::string& out_path, ByteSpan key,
                   const PipelineOptions& options, const OutputOptions& output) {
  return between_paths(in_path, out_path, output,
                       [&](int in_fd, int out_fd) { return open_fd(in_fd, out_fd, key, options); });
}

}  // namespace gpucrypt::format
