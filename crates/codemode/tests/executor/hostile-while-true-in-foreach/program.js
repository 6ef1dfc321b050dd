[1, 2, 3].forEach(() => { for (;;) {} })
