extension TokenStream {
    /// Appends every token (and its fields) to `writer` and finishes it; the first token the
    /// writer cannot take stops the copy, named by its line in this stream's source.
    /// Returns what was read (its `tokens` are what was written).
    @discardableResult
    public func copy(to writer: TokenSetWriter, sourceName: String) throws(TokenSetError) -> TokenStreamSummary {
        var failure: TokenSetError?
        while let batch = next() {
            for index in 0..<batch.count where failure == nil {
                let token = batch[index]
                do {
                    try writer.append(hex: token.token, fields: token.fields, line: token.line)
                } catch {
                    // Name the line in the input, not in the file being written.
                    failure = TokenSetError(error.message, source: sourceName, line: token.line)
                }
            }
            recycle(batch)
            if failure != nil { cancel() }
        }
        if let failure { throw failure }
        guard let summary = waitForSummary(timeout: .seconds(10)) else {
            throw TokenSetError("the reader did not finish within 10 s", source: sourceName)
        }
        if let error = summary.error ?? summary.lostRejects { throw error }
        try writer.finish()
        return summary
    }

    /// Reads the whole stream, checking every token, and returns what it held.
    public func count() throws(TokenSetError) -> TokenStreamSummary {
        while let batch = next() { recycle(batch) }
        guard let summary = waitForSummary(timeout: .seconds(10)) else {
            throw TokenSetError("the reader did not finish within 10 s", source: "")
        }
        if let error = summary.error ?? summary.lostRejects { throw error }
        return summary
    }
}

extension TokenSetWriter {
    /// Writes every token of `generator` and finishes the file.
    public func write(_ generator: TokenGenerator) throws(TokenSetError) {
        let raw = UnsafeMutableRawBufferPointer.allocate(byteCount: generator.length, alignment: 8)
        defer { raw.deallocate() }
        for index in 0..<generator.count {
            generator.writeToken(index, to: raw.baseAddress!)
            try append(raw: UnsafeRawBufferPointer(raw), line: Int(index) + 1)
        }
        try finish()
    }
}
