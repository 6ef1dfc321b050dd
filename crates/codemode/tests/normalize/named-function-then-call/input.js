function helper() { return 1; }
helper()