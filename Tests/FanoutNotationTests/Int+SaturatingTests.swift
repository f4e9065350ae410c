import FanoutNotation
import Testing

@Suite struct IntSaturatingTests {
    @Test(arguments: [
        (0.0, 0), (1.9, 1), (-1.9, -1), (9.2e18, 9_200_000_000_000_000_000), (1e19, Int.max), (-1e19, Int.min),
        (.infinity, Int.max), (-.infinity, Int.min), (.nan, 0), (0x1p63, Int.max), (-0x1p63, Int.min),
    ])
    func aDoubleIsHeldToIntsRange(value: Double, expected: Int) {
        #expect(Int(saturating: value) == expected)
    }
}
