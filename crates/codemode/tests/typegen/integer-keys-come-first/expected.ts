type K = {
    "2"?: string;
    "10"?: string;
    b?: string;
}