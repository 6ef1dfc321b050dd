const x = 1;
const = 2;
