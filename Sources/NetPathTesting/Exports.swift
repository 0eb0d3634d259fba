@_exported import NetPath
@_exported import NetPathCore
