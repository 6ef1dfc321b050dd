'x'.repeat(2 ** 30)
