await items.echo({toJSON() { const a = {}; a.a = a; return a }})
