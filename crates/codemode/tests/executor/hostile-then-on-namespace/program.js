const x = await items; return typeof x
