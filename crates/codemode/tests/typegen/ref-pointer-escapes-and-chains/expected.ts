type P = {
    x?: boolean;
    y?: number | null;
}