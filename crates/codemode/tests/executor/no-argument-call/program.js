const r = await items.echo(); return r === undefined
