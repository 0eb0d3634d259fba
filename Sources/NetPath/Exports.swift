@_exported import NetPathCore
@_exported import NetPathPlugin
