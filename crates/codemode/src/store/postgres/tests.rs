//! Known answers for hiding a password in the addresses that messages show.

use super::masked;

#[test]
fn a_password_never_shows() {
    assert_eq!(
        masked("postgres://ann:s3cret@db.example:5432/codemode"),
        "postgres://ann:***@db.example:5432/codemode"
    );
    assert_eq!(
        masked("postgres://ann@db.example/codemode?sslmode=disable"),
        "postgres://ann@db.example/codemode?sslmode=disable"
    );
    assert_eq!(
        masked("postgres://ann@db.example/codemode?sslmode=require&password=s3cret"),
        "postgres://ann@db.example/codemode?sslmode=require&password=***"
    );
    assert_eq!(
        masked("postgres://ann:pw@db.example?password=s3cret"),
        "postgres://ann:***@db.example?password=***"
    );
    assert_eq!(
        masked("host=db user=ann password=s3cret dbname=x"),
        "host=db user=ann password=*** dbname=x"
    );
}
