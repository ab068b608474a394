/// The server's version, shown by `touchsync version`, `/health` and the start-up line.
public enum BuildInfo {
    public static let version = "0.1.0"
}
