type E = {
    e?: "a\"b" | "line\nbreak" | 1 | true | null | {"k":[1]};
    empty?: never;
    c?: "x";
    n?: null;
    o?: {"a":1};
}