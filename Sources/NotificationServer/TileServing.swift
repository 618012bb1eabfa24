import Basics
import Foundation
import HTTPTypes
import Hummingbird
import Ledger
import LogEngine
import NIOCore

/// `GET /tiles/...`: a directory `handover tiles` keeps, served read-only as C2SP tlog-tiles:
/// `checkpoint` for a few seconds of caching, every tile as immutable (a tile path's bytes never
/// change: a larger partial tile has another path), the entry bundles only to holders of the
/// read secret (they hold every event as logged). Only paths a tile can have are read: anything
/// else is 404 without touching the disk.
public struct TileServing: Sendable {
    /// The tiles directory.
    public let directory: String
    /// The bearer secret entry bundles are served for; without one they are never served.
    public let readSecret: BearerSecret?

    public init(directory: String, readSecret: BearerSecret?) {
        self.directory = directory
        self.readSecret = readSecret
    }

    /// The largest file served: an entry bundle of 256 events of up to 64 KiB each.
    static let maximumFileBytes = 256 * 65_537

    /// The answer to `GET /tiles/<path>`.
    func response(path: String, authorization: String?) -> Response {
        let file: String
        let cacheControl: String
        let contentType: String
        if path == "checkpoint" {
            (file, cacheControl, contentType) = ("checkpoint", "public, max-age=5", "text/plain; charset=utf-8")
        } else if let tile = TileID(path: path) {
            if tile.kind == .entries, !(readSecret?.accepts(authorization: authorization) ?? false) {
                return HandoverServer.plainText(
                    readSecret == nil ? .notFound : .unauthorized, readSecret == nil ? "not found" : "entry bundles need the read secret")
            }
            (file, cacheControl, contentType) = (tile.path, "public, max-age=31536000, immutable", "application/octet-stream")
        } else {
            return HandoverServer.plainText(.notFound, "not found")
        }
        guard let bytes = try? FileBytes.readIfPresent(directory + "/" + file, limit: TileServing.maximumFileBytes) else {
            return HandoverServer.plainText(.notFound, "not found")
        }
        return Response(
            status: .ok, headers: [.contentType: contentType, .cacheControl: cacheControl], body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
    }
}
