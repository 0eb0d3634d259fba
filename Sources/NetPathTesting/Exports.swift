@_exported import NetPathCore
