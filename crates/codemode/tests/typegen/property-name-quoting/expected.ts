type Q = {
    ok_name?: string;
    "has-dash"?: string;
    ""?: string;
    "quote\"d"?: string;
    "ctrl\u0001"?: string;
    "2nd"?: string;
}