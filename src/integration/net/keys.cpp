#include <tact/net/keys.hpp>

#include <array>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zmq.h>

namespace tact::net {

namespace {

constexpr std::size_t z85_key_size = 40;
constexpr std::string_view z85_alphabet =
    "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#";

[[noreturn]] void fail(const std::string& where, std::size_t line, const std::string& what) {
  throw key_error{where + (line != 0 ? ":" + std::to_string(line) : std::string{}) + ": " + what};
}

bool is_name(std::string_view name) noexcept {
  if (name.empty()) return false;
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '-' || c == '_';
    if (!ok) return false;
  }
  return true;
}

// A line's words; none for a comment line. Only a whole line is a
// comment: '#' is also a letter of Z85 keys.
std::vector<std::string> words(const std::string& line) {
  std::vector<std::string> out;
  std::istringstream in{line};
  for (std::string w; in >> w;) out.push_back(w);
  if (!out.empty() && out.front().front() == '#') out.clear();
  return out;
}

}  // namespace

bool is_key(std::string_view key) noexcept {
  if (key.size() != z85_key_size) return false;
  for (char c : key)
    if (z85_alphabet.find(c) == std::string_view::npos) return false;
  return true;
}

key_pair generate_key_pair() {
  std::array<char, z85_key_size + 1> pub{}, sec{};
  if (zmq_curve_keypair(pub.data(), sec.data()) != 0)
    throw key_error{std::string{"tact: no key pair: "} + zmq_strerror(zmq_errno())};
  return {pub.data(), sec.data()};
}

std::string public_key_of(std::string_view secret_key) {
  if (!is_key(secret_key)) throw key_error{"tact: not a Z85 secret key"};
  const std::string secret{secret_key};
  std::array<char, z85_key_size + 1> pub{};
  if (zmq_curve_public(pub.data(), secret.c_str()) != 0)
    throw key_error{std::string{"tact: not a secret key: "} + zmq_strerror(zmq_errno())};
  return pub.data();
}

void write_key_file(const std::filesystem::path& path, const key_pair& keys) {
  const std::string where = path.string();
  if (!is_key(keys.public_key) || !is_key(keys.secret_key) || public_key_of(keys.secret_key) != keys.public_key)
    fail(where, 0, "not a key pair");
  // Created with its final mode: no moment when others may read it.
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, S_IRUSR | S_IWUSR);
  if (fd < 0) fail(where, 0, std::strerror(errno));
  const std::string text = "# tact node key pair: keep this file private\npublic " + keys.public_key +
                           "\nsecret " + keys.secret_key + "\n";
  const bool written = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  const bool closed = ::close(fd) == 0;
  if (!written || !closed) {
    std::filesystem::remove(path);
    fail(where, 0, "could not be written");
  }
}

key_pair read_key_file(const std::filesystem::path& path) {
  const std::string where = path.string();
  struct stat st{};
  if (::stat(path.c_str(), &st) != 0) fail(where, 0, std::strerror(errno));
  if ((st.st_mode & (S_IRWXG | S_IRWXO)) != 0)
    fail(where, 0, "others may read or write it: make it private (chmod 600)");
  std::ifstream in{path};
  if (!in) fail(where, 0, "cannot be read");
  key_pair keys;
  std::size_t number = 0;
  for (std::string line; std::getline(in, line);) {
    ++number;
    const std::vector<std::string> w = words(line);
    if (w.empty()) continue;
    if (w.size() != 2 || (w[0] != "public" && w[0] != "secret"))
      fail(where, number, "expected 'public KEY' or 'secret KEY'");
    if (!is_key(w[1])) fail(where, number, "not a Z85 key (40 characters)");
    std::string& slot = w[0] == "public" ? keys.public_key : keys.secret_key;
    if (!slot.empty()) fail(where, number, w[0] + " key given twice");
    slot = w[1];
  }
  if (keys.secret_key.empty()) fail(where, 0, "no secret key");
  const std::string derived = public_key_of(keys.secret_key);
  if (keys.public_key.empty())
    keys.public_key = derived;
  else if (keys.public_key != derived)
    fail(where, 0, "the public key is not that of the secret key");
  return keys;
}

std::vector<peer> parse_allow_list(std::string_view text, std::string_view source) {
  const std::string where{source};
  std::vector<peer> peers;
  std::set<std::string> names, keys;
  std::istringstream in{std::string{text}};
  std::size_t number = 0;
  for (std::string line; std::getline(in, line);) {
    ++number;
    const std::vector<std::string> w = words(line);
    if (w.empty()) continue;
    if (w.size() < 2 || w.size() > 3) fail(where, number, "expected 'NAME PUBLIC-KEY [ADDRESS]'");
    if (!is_name(w[0])) fail(where, number, "'" + w[0] + "' is not a name (letters, digits, '.', '-', '_')");
    if (!is_key(w[1])) fail(where, number, "not a Z85 public key (40 characters)");
    if (w.size() == 3 && w[2].rfind("tcp://", 0) != 0) fail(where, number, "an address is tcp://HOST:PORT");
    if (!names.insert(w[0]).second) fail(where, number, "'" + w[0] + "' is listed twice");
    if (!keys.insert(w[1]).second) fail(where, number, "this key is listed twice");
    peers.push_back({w[0], w[1], w.size() == 3 ? w[2] : std::string{}});
  }
  return peers;
}

std::vector<peer> read_allow_list(const std::filesystem::path& path) {
  std::ifstream in{path};
  if (!in) fail(path.string(), 0, "cannot be read");
  std::ostringstream text;
  text << in.rdbuf();
  return parse_allow_list(text.str(), path.string());
}

}  // namespace tact::net
