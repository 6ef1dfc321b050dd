type DataInput = {
    tags?: string[];
    scores?: number[];
}