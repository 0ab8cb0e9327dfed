// Node keys and allow-lists as a user handles them: key files that stay
// private, and lists whose mistakes are named with their line.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>

#include <sys/stat.h>
#include <unistd.h>

#include <tact/net/keys.hpp>

namespace {

namespace fs = std::filesystem;

// A fresh directory under the system's temporary one, removed at the end.
struct scratch {
  fs::path dir;
  scratch() {
    std::string pattern = (fs::temp_directory_path() / "tact-keys-XXXXXX").string();
    REQUIRE(::mkdtemp(pattern.data()) != nullptr);
    dir = pattern;
  }
  ~scratch() { fs::remove_all(dir); }
};

bool throws_naming(auto&& f, const std::string& words) {
  try {
    f();
  } catch (const tact::net::key_error& e) {
    INFO(e.what());
    return std::string{e.what()}.find(words) != std::string::npos;
  }
  return false;
}

}  // namespace

TEST_CASE("a key pair is written private, read back, and never overwritten") {
  scratch s;
  const tact::net::key_pair keys = tact::net::generate_key_pair();
  CHECK(tact::net::is_key(keys.public_key));
  CHECK(tact::net::is_key(keys.secret_key));
  CHECK(tact::net::public_key_of(keys.secret_key) == keys.public_key);

  const fs::path file = s.dir / "node.key";
  tact::net::write_key_file(file, keys);
  struct stat st{};
  REQUIRE(::stat(file.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
  const tact::net::key_pair back = tact::net::read_key_file(file);
  CHECK(back.public_key == keys.public_key);
  CHECK(back.secret_key == keys.secret_key);

  const tact::net::key_pair other = tact::net::generate_key_pair();
  CHECK(other.secret_key != keys.secret_key);
  CHECK(throws_naming([&] { tact::net::write_key_file(file, other); }, "exists"));
  CHECK(tact::net::read_key_file(file).secret_key == keys.secret_key);
}

TEST_CASE("a key file others may read is refused") {
  scratch s;
  const fs::path file = s.dir / "node.key";
  tact::net::write_key_file(file, tact::net::generate_key_pair());
  REQUIRE(::chmod(file.c_str(), 0640) == 0);
  CHECK(throws_naming([&] { tact::net::read_key_file(file); }, "chmod 600"));
}

TEST_CASE("a key file whose keys do not match is refused") {
  scratch s;
  const fs::path file = s.dir / "node.key";
  {
    std::ofstream out{file};
    out << "public " << tact::net::generate_key_pair().public_key << "\n"
        << "secret " << tact::net::generate_key_pair().secret_key << "\n";
  }
  REQUIRE(::chmod(file.c_str(), 0600) == 0);
  CHECK(throws_naming([&] { tact::net::read_key_file(file); }, "not that of the secret key"));
  CHECK(throws_naming([&] { tact::net::read_key_file(s.dir / "missing.key"); }, "missing.key"));
}

TEST_CASE("an allow-list names its peers, and its mistakes by line") {
  const std::string a = tact::net::generate_key_pair().public_key;
  const std::string b = tact::net::generate_key_pair().public_key;
  const auto peers = tact::net::parse_allow_list("# the cluster\n\n  db1 " + a +
                                                 " tcp://127.0.0.1:48896\nclient-7 " + b + "\n");
  REQUIRE(peers.size() == 2);
  CHECK(peers[0].name == "db1");
  CHECK(peers[0].public_key == a);
  CHECK(peers[0].address == "tcp://127.0.0.1:48896");
  CHECK(peers[1].name == "client-7");
  CHECK(peers[1].address.empty());

  using tact::net::parse_allow_list;
  CHECK(throws_naming([&] { parse_allow_list("db1 " + a + "\ndb1 " + b, "peers"); }, "peers:2: 'db1' is listed twice"));
  CHECK(throws_naming([&] { parse_allow_list("db1 " + a + "\ndb2 " + a, "peers"); }, "peers:2: this key is listed twice"));
  CHECK(throws_naming([&] { parse_allow_list("db1 short", "peers"); }, "peers:1: not a Z85 public key"));
  CHECK(throws_naming([&] { parse_allow_list("db/1 " + a, "peers"); }, "is not a name"));
  CHECK(throws_naming([&] { parse_allow_list("db1 " + a + " 10.0.0.1:5", "peers"); }, "tcp://HOST:PORT"));
  CHECK(throws_naming([&] { parse_allow_list("db1", "peers"); }, "NAME PUBLIC-KEY"));
}

TEST_CASE("the allow-list of docs/remote.md reads as it says, '#' inside a key included") {
  const auto peers = tact::net::parse_allow_list(
      "# name     public key                                 address\n"
      "db1        bG6VFt^T(BMH5?Wt7hD3S5w2i>$KKCxZ}J5H0vT]   tcp://10.0.0.5:48896\n"
      "client-7   4)zYtR@#cU*oiT<*sWvXirabVwH9&}kc{aGO3%?k\n");
  REQUIRE(peers.size() == 2);
  CHECK(peers[0].address == "tcp://10.0.0.5:48896");
  CHECK(peers[1].public_key == "4)zYtR@#cU*oiT<*sWvXirabVwH9&}kc{aGO3%?k");
}
