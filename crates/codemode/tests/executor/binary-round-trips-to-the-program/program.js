const r = await items.echo({u: new Uint8Array([7,8]), a: new Uint8Array([9]).buffer}); return [r.u instanceof Uint8Array, [...r.u], r.a instanceof ArrayBuffer, r.a.byteLength]
