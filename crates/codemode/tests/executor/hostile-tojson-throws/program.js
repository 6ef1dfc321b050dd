await items.echo({toJSON() { throw new Error('toJSON boom') }})
