// A raw TCP connection to a `cairn serve` under test, for requests no HTTP
// client library would send (pipelined, HTTP/1.0, half-written, huge).
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cerrno>
#include <string>
#include <string_view>

namespace cairn::testing {

// A blocking TCP connection to the fixture's server, with send and receive
// timeouts so a broken server fails the test instead of hanging it.
class RawConnection {
 public:
  // `receive_buffer` > 0 shrinks the socket's receive buffer (so that a
  // client that does not read stalls the server's writes early).
  explicit RawConnection(const std::string& base, int timeout_seconds = 10,
                         int receive_buffer = 0) {
    // base is "http://127.0.0.1:PORT".
    std::string hostport = base.substr(base.find("//") + 2);
    std::string host = hostport.substr(0, hostport.rfind(':'));
    int port = std::stoi(hostport.substr(hostport.rfind(':') + 1));
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    REQUIRE(fd_ >= 0);
    int one = 1;
    setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    timeval tv{timeout_seconds, 0};
    setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    setsockopt(fd_, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    if (receive_buffer > 0) {
      setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &receive_buffer, sizeof(receive_buffer));
    }
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    REQUIRE(inet_pton(AF_INET, host.c_str(), &addr.sin_addr) == 1);
    REQUIRE(connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0);
  }
  ~RawConnection() {
    if (fd_ >= 0) close(fd_);
  }
  RawConnection(const RawConnection&) = delete;
  RawConnection& operator=(const RawConnection&) = delete;

  // Sends all of `data` (no SIGPIPE); 0, or the errno of the failed send.
  int SendAll(std::string_view data) {
    while (!data.empty()) {
      ssize_t n = send(fd_, data.data(), data.size(), MSG_NOSIGNAL);
      if (n < 0) {
        if (errno == EINTR) continue;
        return errno;
      }
      data.remove_prefix(static_cast<size_t>(n));
    }
    return 0;
  }

  // Everything the server sends until it ends the stream; `error` is the
  // errno that ended it instead (ECONNRESET: the answer may be lost).
  std::string ReadToEnd(int* error) {
    std::string out;
    char buf[65536];
    *error = 0;
    while (true) {
      ssize_t n = recv(fd_, buf, sizeof(buf), 0);
      if (n > 0) {
        out.append(buf, static_cast<size_t>(n));
      } else if (n == 0) {
        return out;
      } else if (errno != EINTR) {
        *error = errno;
        return out;
      }
    }
  }

  // Reads until `marker` has arrived (or the stream ends).
  std::string ReadUntil(const std::string& marker) {
    std::string out;
    char buf[4096];
    while (out.find(marker) == std::string::npos) {
      ssize_t n = recv(fd_, buf, sizeof(buf), 0);
      if (n <= 0) break;
      out.append(buf, static_cast<size_t>(n));
    }
    return out;
  }

 private:
  int fd_ = -1;
};

}  // namespace cairn::testing
