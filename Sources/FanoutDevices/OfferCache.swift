/// The payload engagement read last and what it offered (`NotificationOffer`), and the URLs of
/// the actions looked up in it: a fan-out's notifications mostly share one payload, which is
/// then compared, not read again. Its bytes are kept in an array that keeps its capacity, so a
/// payload that changes each time (personalised) is copied without allocating once the array
/// has grown to the longest.
struct OfferCache {
    private var body: [UInt8] = []
    private var offer: NotificationOffer?
    /// Each action as `NotificationOffer.action(named:in:)` found it in `body`, once looked up.
    private var actions: [Lookup] = []

    private enum Lookup {
        case notYet
        case found(Range<Int>??)
    }

    /// What `body` offers: the cached one when `body` is the payload read last.
    mutating func offer(of body: UnsafeRawBufferPointer, actions count: Int) -> NotificationOffer {
        if let offer, body.count == self.body.count,
            body.count == 0
                || self.body.withUnsafeBytes({ memcmp($0.baseAddress!, body.baseAddress!, body.count) }) == 0
        {
            return offer
        }
        let read = body.count == 0 ? NotificationOffer() : NotificationOffer.scan(body)
        self.body.removeAll(keepingCapacity: true)
        self.body.append(contentsOf: body)
        offer = read
        actions.removeAll(keepingCapacity: true)
        actions.append(contentsOf: repeatElement(.notYet, count: count))
        return read
    }

    /// Whether `offer` (the one `offer(of:)` returned for `body`) carries action `index`, named
    /// `name()`, and its URL: looked up once a payload.
    mutating func action(
        _ index: Int,
        of offer: NotificationOffer,
        in body: UnsafeRawBufferPointer,
        name: () -> [UInt8]
    ) -> Range<Int>?? {
        if index < actions.count, case .found(let known) = actions[index] { return known }
        let found = name().withUnsafeBytes { offer.action(named: $0, in: body) }
        if index < actions.count { actions[index] = .found(found) }
        return found
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
