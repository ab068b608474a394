# Homebrew formula: installs the release binary of TouchSync server (docs/release.md).
# The version and the SHA-256 values are written at release time by scripts/update-formula from
# the release's SHA256SUMS (the release workflow attaches the result); this copy is the template
# with the last values committed.
class Touchsync < Formula
  desc "Self-hosted backend for the TouchSync iOS app: REST API and Socket.IO realtime"
  homepage "https://github.com/touchsync/touchsync-server"
  version "0.1.0"
  license "MIT"

  on_macos do
    url "https://github.com/touchsync/touchsync-server/releases/download/v#{version}/touchsync-#{version}-macos-universal.tar.gz"
    sha256 "0000000000000000000000000000000000000000000000000000000000000000" # macos-universal
  end

  on_linux do
    on_intel do
      url "https://github.com/touchsync/touchsync-server/releases/download/v#{version}/touchsync-#{version}-linux-x86_64.tar.gz"
      sha256 "0000000000000000000000000000000000000000000000000000000000000000" # linux-x86_64
    end
    on_arm do
      url "https://github.com/touchsync/touchsync-server/releases/download/v#{version}/touchsync-#{version}-linux-aarch64.tar.gz"
      sha256 "0000000000000000000000000000000000000000000000000000000000000000" # linux-aarch64
    end
    # The Linux binary links the design's system libraries dynamically.
    depends_on "curl"
    depends_on "libpq"
    depends_on "openssl@3"
    depends_on "sqlite"
  end

  def install
    bin.install "touchsync"
  end

  test do
    assert_match version.to_s, shell_output("#{bin}/touchsync --version")
    port = free_port
    pid = spawn bin/"touchsync", "serve", "--test-mode", "--database", ":memory:", "--port", port.to_s
    begin
      sleep 2
      assert_match "\"status\":\"ok\"", shell_output("curl -fsS http://127.0.0.1:#{port}/health")
    ensure
      Process.kill("TERM", pid)
      Process.wait(pid)
    end
  end
end
