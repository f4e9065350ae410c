import FanoutAPNs
import FanoutClient
import FanoutRun
import Testing

@testable import fanout

/// Every option of `fanout send --broadcast` lands in its field of the job, and the defaults
/// are the documented ones.
struct BroadcastOptionsTests {
    static let base = [
        "--broadcast", "--topic", "com.example.app.push-type.liveactivity", "--template",
        "fixtures/liveactivity-update.json",
    ]

    @Test func everyOptionReachesTheJob() throws {
        let job = try SendCommand.parse(
            Self.base + [
                "--endpoint", "http://127.0.0.1:2197", "--channels", "250", "--storage-policy", "0", "--updates", "7",
                "--keep-channels", "--channels-endpoint", "https://manage.example.com:2195",
            ]
        ).job()
        let broadcast = try #require(job.broadcast)
        #expect(broadcast.app == "com.example.app")
        #expect(broadcast.channels == .create(count: 250, storagePolicy: 0))
        #expect(broadcast.updates == 7)
        #expect(broadcast.keepChannels)
        #expect(broadcast.management == SendJob.Endpoint(tls: true, host: "manage.example.com", port: 2195))
        #expect(job.headers.pushType == .liveactivity)
        #expect(job.headers.topic == "com.example.app.push-type.liveactivity")
        #expect(job.headers.expiration == 0)
        #expect(try job.loadConfiguration().endpoint.broadcastApp == "com.example.app")
    }

    @Test func theDefaults() throws {
        let job = try SendCommand.parse(
            Self.base + ["--endpoint", "http://127.0.0.1:2197", "--channel-ids", "ids.txt", "--priority", "5"]
        ).job()
        let broadcast = try #require(job.broadcast)
        #expect(broadcast.channels == .file("ids.txt"))
        #expect(broadcast.updates == 1)
        #expect(!broadcast.keepChannels)
        // A sink answers both: the management endpoint is the endpoint itself.
        #expect(broadcast.management == job.endpoint)
        #expect(job.headers.priority == .powerConsidered)
        // Given ids' storage policy is not known: deliver once, which either policy takes.
        #expect(job.headers.expiration == 0)
    }

    /// Channels the run creates with storage policy 1 (the default) get no apns-expiration, so
    /// APNs stores each update for subscribers who are away; policy 0 takes 0 only.
    @Test func createdChannelsThatStoreGetNoExpiration() throws {
        let stores = try SendCommand.parse(Self.base + ["--endpoint", "http://127.0.0.1:2197", "--channels", "2"]).job()
        #expect(stores.headers.expiration == nil)
        let once = try SendCommand.parse(
            Self.base + ["--endpoint", "http://127.0.0.1:2197", "--channels", "2", "--storage-policy", "0"]
        ).job()
        #expect(once.headers.expiration == 0)
        let told = try SendCommand.parse(
            Self.base + ["--endpoint", "http://127.0.0.1:2197", "--channels", "2", "--expiration", "1900000000"]
        ).job()
        #expect(told.headers.expiration == 1_900_000_000)
    }

    @Test(arguments: [
        ("https://api.sandbox.push.apple.com", "api-manage-broadcast.sandbox.push.apple.com", 2195),
        ("https://api.push.apple.com", "api-manage-broadcast.push.apple.com", 2196),
    ])
    func applesHostsManageOnApplesManagementHosts(endpoint: String, host: String, port: Int) throws {
        let job = try SendCommand.parse(Self.base + ["--endpoint", endpoint, "--channels", "2", "--production"]).job()
        #expect(job.broadcast?.management == SendJob.Endpoint(tls: true, host: host, port: port))
    }

    @Test(
        arguments: [
            (["--channels", "3", "--channel-ids", "ids.txt"], "give either --channels N"),
            ([], "give either --channels N"),
            (["--channels", "10001"], "--channels is 1 to 10000"),
            (["--channels", "3", "--storage-policy", "2"], "--storage-policy is 0"),
            (["--channels", "3", "--storage-policy", "0", "--expiration", "1900000000"], "is 0, not 1900000000"),
            (["--channel-ids", "ids.txt", "--keep-channels"], "are for created channels"),
            (["--channels", "3", "--updates", "0"], "--updates must be at least 1"),
        ] as [([String], String)]
    )
    func badCombinationsAreRefused(options: [String], message: String) {
        do {
            _ = try SendCommand.parse(Self.base + ["--endpoint", "http://127.0.0.1:2197"] + options)
            Issue.record("\(options) was taken")
        } catch {
            #expect(SendCommand.message(for: error).contains(message), "\(SendCommand.message(for: error))")
        }
    }

    @Test func broadcastOptionsNeedBroadcast() {
        do {
            _ = try SendCommand.parse(["--endpoint", "http://127.0.0.1:2197", "--generate", "3", "--channels", "3"])
            Issue.record("--channels without --broadcast was taken")
        } catch {
            #expect(
                SendCommand.message(for: error)
                    == "--channels, --channel-ids, --updates, --storage-policy, --keep-channels and --channels-endpoint "
                    + "go with --broadcast.",
                "\(SendCommand.message(for: error))"
            )
        }
    }
}
