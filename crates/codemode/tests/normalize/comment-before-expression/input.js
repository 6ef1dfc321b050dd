// sum
1 + 1