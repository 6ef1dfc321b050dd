const b = await items.bytes(); return [b instanceof Uint8Array, [...b]]
