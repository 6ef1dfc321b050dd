new Array(1e9).fill(0)
