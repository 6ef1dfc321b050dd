await items.nope()
