await items.echo({get x() { throw new Error('getter boom') }})
