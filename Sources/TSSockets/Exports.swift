// `Lock` and `LockedValue` live in TSSync, the bottom layer; every user of TSSockets sees them.
@_exported import TSSync
