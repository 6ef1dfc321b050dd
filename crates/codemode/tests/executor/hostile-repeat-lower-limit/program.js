'x'.repeat(2 ** 22).length
