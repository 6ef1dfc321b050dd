await codemode.nope()
