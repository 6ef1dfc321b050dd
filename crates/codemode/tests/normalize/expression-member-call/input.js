const a = [1];
a.map((x) => x * 2).join(',')