const x = 10;
x * 2