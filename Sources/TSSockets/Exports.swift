// `Mutex`, `Atomic` (re-exported from Synchronization), `LockedValue`, `Condition` and
// `SpawnedThread` live in TSSync, the bottom layer; every user of TSSockets sees them.
@_exported import TSSync
