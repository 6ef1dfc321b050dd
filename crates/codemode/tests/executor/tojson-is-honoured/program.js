return await items.echo({v: {toJSON() { return 'custom' }}, u: undefined, f() {}, nan: NaN})
