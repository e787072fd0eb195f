plugins {
    id("com.android.application")
    id("org.jetbrains.kotlin.android")
}

android {
    // The upstream harness's package: its broadcasts name com.example.myapplication/.AdbReceiver.
    namespace = "com.example.myapplication"
    compileSdk = 34

    defaultConfig {
        applicationId = "com.example.myapplication"
        minSdk = 26 // TYPE_APPLICATION_OVERLAY
        targetSdk = 34
        versionCode = 1
        versionName = "1.0"
    }

    buildTypes {
        release {
            isMinifyEnabled = false
        }
    }

    compileOptions {
        sourceCompatibility = JavaVersion.VERSION_17
        targetCompatibility = JavaVersion.VERSION_17
    }
    kotlinOptions {
        jvmTarget = "17"
    }
}
