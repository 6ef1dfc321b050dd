const buf = new Uint8Array([1,2,3,4]).buffer; return await items.echo({u: new Uint8Array([1,2,3]), a: buf, v: new DataView(buf, 1, 2), s: new Uint8Array(buf, 2, 2)})
